"""why: what a report says about speed (why not faster), read from a built report"""
