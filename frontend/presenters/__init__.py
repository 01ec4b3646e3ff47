"""Presenters: everything that turns the engine's results and the models into what a template or a figure shows
(rows, display strings, trees of display nodes). They compute into objects of their own and never write into
the engine's results; the views only pick a presenter and render its output."""
