from gpumodeler.cli.main import main

raise SystemExit(main())
