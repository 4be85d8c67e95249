"""Calibration dialog: a link's transfer model fitted to measured copies, shown on a log-log
plot with its residuals and leave-one-out error, stored in the user device database."""
