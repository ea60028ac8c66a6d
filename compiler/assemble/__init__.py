"""assemble"""
