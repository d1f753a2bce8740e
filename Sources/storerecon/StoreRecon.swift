import ArgumentParser

@main
struct StoreRecon: ParsableCommand {}
