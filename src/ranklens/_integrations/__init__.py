"""Layer 6, the integrations: comparisons of runs, plots, the scikit-learn drop-ins, the boosters' metrics."""
