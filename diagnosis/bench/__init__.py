"""The bench: experiments comparing learners on one dataset over the same folds and matrices."""
