"""Entry script of the bundled `gpumodeler` command line (PyInstaller needs a file)."""
from gpumodeler.cli.main import main

raise SystemExit(main())
