"""Entry script of the bundled `gpumodeler-gui` (PyInstaller needs a file to start from)."""
from gpumodeler.ui.app import main

raise SystemExit(main())
