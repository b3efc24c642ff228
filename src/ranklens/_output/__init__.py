"""Layer 5, the output: results, comparisons and report tables written in the output formats."""
