"""The training: trained models, their progress, approval and selection, the training queue
and its Celery tasks."""
