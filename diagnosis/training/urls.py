"""URLs of the training app (included at the root by ``config.urls``); the model pages a
training leads to are the clinic's."""

from django.urls import path

from . import views

urlpatterns = [
    path("train/", views.train, name="train"),
]
