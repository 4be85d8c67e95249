"""Applications on systems: steps on streams across GPUs and links, the timeline simulation
(exact event arithmetic) and energy."""
from gpumodeler.core.application.energy import ApplicationEnergy, DevicePower, energy
from gpumodeler.core.application.timeline import (Activity, ScheduledActivity, Timeline, fair_rates,
                                                  simulate)

__all__ = ["Activity", "ApplicationEnergy", "DevicePower", "ScheduledActivity", "Timeline",
           "energy", "fair_rates", "simulate"]
