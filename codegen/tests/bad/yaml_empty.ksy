# a schema with nothing but a comment
