"""The terminal chat and the one-shot ``--ask`` on top of the engine."""
