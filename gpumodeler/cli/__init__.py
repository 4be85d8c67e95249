"""The `gpumodeler` command line, over core and db."""
