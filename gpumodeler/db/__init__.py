"""Persistence in SQLite (sqlite-utils): device databases and project files."""
