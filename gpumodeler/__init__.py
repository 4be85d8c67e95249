"""gpumodeler: model how fast a CUDA application will run on GPUs you may not own."""

__version__ = "0.1.0"
