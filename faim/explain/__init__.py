"""Explanations of a model's scores (``Detector.explain``, ``faim explain``): element shares, token attributions and
picture heat maps computed with Captum (``faim.explain.attribute``), written as JSON and an HTML page
(``faim.explain.report``)."""
