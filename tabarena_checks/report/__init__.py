"""What a run's raw results say, as a report: ``checks inspect`` (text and JSON) and the HTML run report of
``checks inspect --html`` and ``checks run process --html``."""
