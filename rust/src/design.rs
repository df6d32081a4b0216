//! G-optimal design / core sets (placeholder, filled in next).
