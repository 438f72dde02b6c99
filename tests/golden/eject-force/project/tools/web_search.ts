// an old copy
