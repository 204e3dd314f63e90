print("llvs-mock")
