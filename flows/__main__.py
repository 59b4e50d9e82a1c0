"""`python -m flows …` is `ldx …`: what `ldx train run --nproc N` has torchrun start on every rank."""

from flows.cli import app

app(prog_name="ldx")
