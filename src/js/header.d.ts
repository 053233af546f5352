/* toolnexus: types shared by the functions below. */
