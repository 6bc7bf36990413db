"""Domain-generalization claims (catalogue cluster C4), judged under DomainBed's protocol."""
