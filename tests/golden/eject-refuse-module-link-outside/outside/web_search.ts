// outside
