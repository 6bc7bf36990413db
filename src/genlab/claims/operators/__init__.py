"""Neural operators on neuraloperator: tensorised Fourier neural operators (MG-TFNO, #29)."""
