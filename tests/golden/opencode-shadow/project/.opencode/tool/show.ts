// old copy
