import sys

from atrl.cli import main

sys.exit(main())
