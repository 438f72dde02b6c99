"""What is kept between runs, so that an unchanged project is not checked again.

Takes a run's result and what it depended on; gives the cache folder and its records
(``folder.py``) and the result cache (``results.py``): the last answer, when every file and
question it was made of is the same. (The compiled rules have their own cache: ``lang/cache.py``.)
"""
