"""The sweep layer of the tbench suite: tbench-sweep, tbench-plot,
tbench-report and tbench-compare, one module a job.

Standard library only. Every statistic is tbench-stats's (C); these
modules plan, run, store, draw and show, and compute none of their own.
"""
