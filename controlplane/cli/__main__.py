import sys

from controlplane.cli import main

sys.exit(main())
