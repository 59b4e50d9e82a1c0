"""`python -m flows …` is `ldx …`: what `ldx train run --nproc N` has torchrun start on every rank."""

from flows.entry import main

main()
