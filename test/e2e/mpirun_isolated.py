"""The command that starts an MPI job from the e2e harnesses: mpirun with a
private session directory (test/mpirun-isolated says why), allowed as root."""
import os

MPIRUN = ["sh", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             os.pardir, "mpirun-isolated")]
