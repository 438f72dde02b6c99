// my own work in progress
