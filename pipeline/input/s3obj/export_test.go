package s3obj

// ParseContentRange exports parseContentRange to the tests.
var ParseContentRange = parseContentRange
