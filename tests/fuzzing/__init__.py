"""The fuzzing suite: structure-aware hypothesis strategies driving every frontend entry point."""
