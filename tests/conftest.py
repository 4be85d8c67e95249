import os

# Before anything imports Qt: the suite runs without a display (CI, servers).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
