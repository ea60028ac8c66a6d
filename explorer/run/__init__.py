"""Running the user's program exactly as ``python`` would, supervised so that its death still leaves a report."""
