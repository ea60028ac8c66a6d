"""What every view stands on: the view model's types, its words (names, durations, ``where``), bounds, phase names."""
