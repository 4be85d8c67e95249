"""File › Import Measurements…: imported measurement records and what to do with them."""
