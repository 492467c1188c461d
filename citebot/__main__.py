import sys

from citebot.commands import main

sys.exit(main())
