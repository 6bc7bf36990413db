"""Raw data sources shared by several tasks (bundled or generated; never downloaded at run time).

Floor: the bottom: imports only ``genlab.data``.
"""
