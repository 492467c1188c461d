"""Documents -> chunks -> an index behind the one door, ``SearchIndex``."""
