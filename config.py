"""Print every citebot setting and where its value came from (flag, env, file, default).

    python config.py [--set KEY=VALUE] [--config FILE] [--json]
"""
import sys

from citebot.commands import config_main as main

if __name__ == "__main__":
    sys.exit(main())
