"""Non-intrusive load monitoring: data augmentation across industrial sites (SIDED + AMDA, #36)."""
