"""The notebook's ``%%compile`` magic: a cell as the function it compiles, its errors, ``--would-recompile``."""
