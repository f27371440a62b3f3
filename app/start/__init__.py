"""What runs before serving: the start-up block (collector paused, attrs code cache) and --workers supervision."""
