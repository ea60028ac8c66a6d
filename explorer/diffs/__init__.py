"""``explorer.diff``: two reports, compiles, stages or graphs side by side, lowered to JSON, HTML and text."""
