"""What is kept between runs: the cache folder and its records (``folder.py``), where the
compiled rules are kept (``lang/program_cache.py``).
"""
