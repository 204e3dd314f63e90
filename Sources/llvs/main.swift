print("llvs")
