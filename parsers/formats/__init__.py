"""One module (or sub-package) per trace format; each declares a `Format` registered through the `traceview.formats` entry points."""
