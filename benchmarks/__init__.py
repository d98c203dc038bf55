"""Performance goals of the course, measured as ratios in one run (see README.md)."""
